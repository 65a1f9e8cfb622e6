class Counter:
    def __init__(self, start):
        self.count = start

    def bump(self, by):
        self.count += by
        return self.count

c = Counter(5)
n = c.bump(2)
