
{	/host:CPU*epoch timestamps€€¨±ãŸçË"
À„=À„=(offset overflowè"õÿÿÿÿÿÿÿÀ„="
op"late