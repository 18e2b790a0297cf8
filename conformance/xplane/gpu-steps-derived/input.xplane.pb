
5	/host:CPUdpython3Ë"
¿Ñ=¿Ñ="work
ë/device:GPU:0§Stream #7(Compute)Ë"5¿Ñ=¿Ñ="
*regs:8"	*jit_g"*fusion.1" "6¿ç∑¿Ñ="
*regs:8"	*jit_g"*fusion.1" "0¿ñ±¿Ñ="
*regs:8"	*jit_g"*fusion.1"6¿ü´¿Ñ="
*regs:8"	*jit_g"*fusion.1" "0¿®•¿Ñ="
*regs:8"	*jit_g"*fusion.1"	k*kernel_details*
hlo_module*
hlo_op*group_id