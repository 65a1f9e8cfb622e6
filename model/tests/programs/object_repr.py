class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

def make():
    p = Point(1, [2])
    loop = [p]
    loop.append(loop)
    return loop
