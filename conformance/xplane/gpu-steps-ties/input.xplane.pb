
5	/host:CPUdpython3è"
À„=À„="work
æ/device:GPU:0»Stream #7(Compute)è"6À„=€¤è"
*regs:8"	*jit_g"*fusion.1" "6€ÚÄ	€‰z"
*regs:8"	*jit_g"*fusion.1" "0€‡§À„="
*regs:8"	*jit_g"*fusion.1»	Stream #9(Compute)è"5À„=€‰z"
*regs:8"	*jit_g"*fusion.1" "0€’ôÀ„="
*regs:8"	*jit_g"*fusion.1"7€ÚÄ	€¤è"
*regs:8"	*jit_g"*fusion.1" "	k*kernel_details*
hlo_module*
hlo_op*group_id