def parse(text):
    return int(text)


def safe(text):
    try:
        return parse(text)
    except ValueError:
        return -1


a = safe("12")
b = safe("x")
print("parsed", a, b)
table = {"k": 1}
missing = table["nope"]
print("never printed")
