import warp as wp

TID = wp.tid


@wp.func
def index_of_thread():
    return TID()


@wp.kernel
def uses_tid_in_func(out: wp.array(dtype=int)):
    i = index_of_thread()
    out[i] = i
