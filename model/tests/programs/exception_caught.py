def check(x):
    if x < 0:
        raise ValueError("negative")
    return x

def safe(x):
    try:
        return check(x)
    except ValueError as e:
        return str(e)
