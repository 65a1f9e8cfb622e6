# Fibonacci numbers, two at a time, summed over a list of sizes.
def fib(n):
    a = 0
    b = 1
    for i in range(n):
        a, b = b, a + b
        print(a)
    return a


total = 0
for k in [3, 5]:
    total = total + fib(k)
print("total", total)
