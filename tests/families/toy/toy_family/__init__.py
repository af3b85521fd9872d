"""A sixth family for the tests: does a system turn each word into its upper case?

It is one folder and one registration (``family.py``), as ``docs/extending.md`` says a new
family is; the test copies the folder elsewhere and registers the object.
"""
