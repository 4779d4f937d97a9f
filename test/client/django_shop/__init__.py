"""A minimal Django app for test/client/test_django.py: the model the README's Django recipe uses."""
