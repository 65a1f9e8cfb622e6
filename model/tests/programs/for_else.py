def find(xs, target):
    for i, x in enumerate(xs):
        if x == target:
            break
    else:
        i = -1
    return i
