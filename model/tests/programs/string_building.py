def join(parts):
    s = ""
    for p in parts:
        s += p.upper()
    return s
