def by_len(words):
    out = sorted(words, key=lambda w: (len(w), w))
    return out
