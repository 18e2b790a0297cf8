
É	/host:CPU*mainË"
¿Ñ=¿Ñ="¿ç∑¿Ñ=""WhileOp-EvalCond"cudaLaunchKernel*correlation_id
ü/device:GPU:1(Stream #2(MemcpyD2D)Ë"¿ñ±¿Ñ=,Stream #4(Compute)Ë"ÄíÙ¿Ñ=""copy"
kernel*correlation_id