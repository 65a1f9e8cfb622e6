def sq(v):
    return v * v

def build(n):
    squares = [sq(i) for i in range(n)]
    index = {s: i for i, s in enumerate(squares)}
    return squares, index
