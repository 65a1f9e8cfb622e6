class Box:
    def __enter__(self):
        return 7

    def __exit__(self, kind, value, tb):
        return False

with Box() as b:
    c = b + 1
d = c
