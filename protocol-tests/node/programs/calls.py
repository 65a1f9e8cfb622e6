def add(a, b):
    total = a + b
    return total


def twice(x):
    y = add(x, x)
    z = y + 1
    return z


result = twice(3)
print(result)
for i in range(3):
    result = result + i
print("done", result)
