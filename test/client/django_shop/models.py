from django.db import models


class Order(models.Model):
    shipped_email_sent = models.BooleanField(default=False)

    class Meta:
        app_label = 'django_shop'
