def scan(xs):
    total = 0
    for x in xs:
        if x < 0:
            continue
        if x > 9:
            break
        total += x
    return total
