class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


def show(points, index, tags):
    first = points[0]
    pairs = [(p.x, p.y) for p in points]
    return len(pairs) + len(index) + len(tags)


numbers = list(range(30))
shapes = show([Point(1, 2), Point(3, 4)], {"a": [1, 2], "b": (3,)}, {"red"})
