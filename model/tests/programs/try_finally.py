def guarded(x):
    log = []
    try:
        log.append(10 // x)
    except ZeroDivisionError:
        log.append("div0")
    finally:
        log.append("end")
    return log
