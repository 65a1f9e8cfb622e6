# Python 3 names are Unicode.
π = 3
τ = 2 * π
print("τ =", τ)
