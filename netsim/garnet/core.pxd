# C constants shared by the compiled core's .pxd files (only these: core.py itself is not compiled).

cdef enum:
    # The error value of the methods returning C integers, `except? RAISED` (-1: see setup.py). Named,
    # not written -1: Cython 3.2 and 3.3 write a negative literal's suffix twice ("-1LLLL") in the
    # methods of final classes, which C compilers reject.
    RAISED = -1
