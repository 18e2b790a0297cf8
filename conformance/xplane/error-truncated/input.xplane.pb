
Á	/host:CPUN	worker/11Ğ"À„=€ÚÄ	" "€‰zÀ–±"€ " ÂH€´‰PZWorker
aggregatedĞ"	(À·"child_op"'#	parent_opÿ"Parent*82"	no_offset*host_os*kind*compute*#