
»	/host:CPU¥mainè" À„=€­â"*	inference" )"€‰z€‰z" "M"€ÚÄ	€­â"ÀŞ
€‰z" "€´‰€‰z" "ÀÁÀ€‰z" " "À·À„=" m	tf_pool/1è"À„="	€‰z"€’ô" "	M"
À–±€‰z" "	M"À–±À„="	€¤è"	À¨¥"TraceContext"
inside"ProcessBatch"
batch_step")%!InstantiatedCapturedFunction::Run"	data_root"async_op"'#ThreadpoolListener::StartRegion"&	"	ThreadpoolListener::StopRegion"

consumer_work"nested_work*
graph_type*iter_num*_pt*
_p*
_r*
id*
_a*_ct*
		_c