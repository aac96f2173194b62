class User:
    # TODO: validate the email address
    def __init__(self, name, email):
        self.name = name
        self.email = email
