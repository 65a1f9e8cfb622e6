def make_adder(k):
    def add(v):
        return v + k
    return add

def use():
    add2 = make_adder(2)
    return add2(5)
