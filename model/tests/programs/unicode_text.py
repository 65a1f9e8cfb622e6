def label(value, unit="Ω"):
    # café: a comment that is not ASCII
    text = f"{value} {unit} ±5%"
    return text


print(label(47), "naïve → ok")
