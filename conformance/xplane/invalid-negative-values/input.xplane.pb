
n	/host:CPU6negativeè"À–±ÀûÂÿÿÿÿÿÿ"(þÿÿÿÿÿÿÿÿÀ„="	backwards"negative_count