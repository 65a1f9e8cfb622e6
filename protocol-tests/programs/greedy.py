# Asks for more memory than a traced run may have (the address-space limit is 4 GiB).
try:
    block = bytearray(8 << 30)
    print("allocated", len(block))
except MemoryError:
    print("MemoryError")
