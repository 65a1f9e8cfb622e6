def f(a):
    return a + 1

def g(b):
    return b * 2

x = f(1) + g(2)
y = x
