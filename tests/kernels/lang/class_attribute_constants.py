import warp as wp

# Attributes of a plain module-level class read in kernels (`Foobar.ONE`): warp
# resolves them as Python values, so they become constants, and a constant
# condition (`if Flags.disabled:`) drops its branch. The class's methods do
# not matter; a name bound again is no longer the class.


class Foobar:
    """Constants grouped in a class."""

    ONE = wp.constant(1)
    TWO = wp.constant(2)
    SCALE = 0.5
    ENABLED = True

    def method(self):
        return 3


class Flags:
    disabled = False


@wp.kernel
def read_constants(a: wp.array[int], x: wp.array[float]):
    i = wp.tid()
    if Foobar.ONE > 0:
        a[i] = 123 + Foobar.TWO
    else:
        a[i] = 456
    x[i] = x[i] * Foobar.SCALE
    if Foobar.ENABLED:
        x[i] += 1.0


@wp.kernel
def folded():
    if Flags.disabled:
        i = wp.tid()


class Rebound:
    VALUE = 1.0


Rebound = wp.constant(2.5)


@wp.kernel
def rebound(x: wp.array[float]):
    x[wp.tid()] = Rebound
