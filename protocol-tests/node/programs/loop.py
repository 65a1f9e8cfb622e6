def square(n):
    return n * n


total = 0
for k in range(3):
    total = total + square(k)
print("total", total)
