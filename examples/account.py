# A bank account that refuses to go below zero: the second withdrawal raises.
class Account:
    def __init__(self, balance):
        self.balance = balance

    def withdraw(self, amount):
        if amount > self.balance:
            raise ValueError("insufficient funds")
        self.balance = self.balance - amount
        return self.balance


acct = Account(10)
left = acct.withdraw(3)
print("left", left)
left = acct.withdraw(20)
print("never printed")
