count = 0

def bump():
    global count
    count += 1

bump()
bump()
