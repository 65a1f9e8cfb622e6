def h(z):
    return z * 2

def g(y):
    w = h(y + 1)
    return w

def f(x):
    return g(x) + 1

r = f(3)
