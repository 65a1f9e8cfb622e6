def countdown(n):
    while n > 0:
        yield n
        n -= 1

def total(n):
    s = 0
    for v in countdown(n):
        s += v
    return s
