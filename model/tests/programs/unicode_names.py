# Python 3 names need not be ASCII: keys, parameters, functions and classes.
π = 3.14159
größe = 2


def fläche(radius):
    ergebnis = π * radius * radius
    return ergebnis


class Kreis:
    def __init__(self, r):
        self.r = r


kreise = [Kreis(größe), Kreis(1)]
σ = 0
for k in kreise:
    σ += fläche(k.r)
日本 = "東京"
print(σ, 日本)
