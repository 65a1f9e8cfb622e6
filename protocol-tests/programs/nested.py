def outer(n):
    def inner(x):
        y = x * 2
        return y

    total = 0
    for i in range(n):
        total += inner(i)
        print("step", i, total)
    return total


result = outer(3)
print("result", result)
