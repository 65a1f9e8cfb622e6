# examples/fib.py with a list to look into: Fibonacci numbers for a list of sizes.
def fib(n):
    a = 0
    b = 1
    for i in range(n):
        a, b = b, a + b
    return a


sizes = [3, 5]
values = []
for k in sizes:
    values.append(fib(k))
print("values", values)
