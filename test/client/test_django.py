#!/usr/bin/env python3
"""The README's Django recipe, run as it is written (read from README.md) against a running
server, with Debian's python3-django and clients/python/pgsem.py: a view throttled to 4 calls in
flight from 12 concurrent requests, and "send the email once" from 8 concurrent workers, including
a worker whose lease ran out before its fence.

Connects with the PG* environment variables. Prints one line per case and ends with
    client-django: P passed, F failed
"""

import os
import re
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'clients', 'python'))
sys.path.insert(0, HERE)  # the django_shop app and readme.py
import readme  # noqa: E402
from tally import Tally  # noqa: E402

tally = Tally('client-django')
check = tally.check


def readme_block(language, marker):
    return readme.block(__file__, language, marker)


# The README blocks this file runs, pinned (test/lib/readme_blocks.py): change a pin only after
# checking that the cases below still test what the block says. readme-pin 561d6de69153467d


def setup_django():
    import django
    from django.conf import settings
    settings.configure(
        DATABASES={'default': {
            'ENGINE': 'django.db.backends.postgresql',
            'NAME': os.environ.get('PGDATABASE', 'postgres'),
            'HOST': os.environ.get('PGHOST', ''),
            'PORT': os.environ.get('PGPORT', ''),
            'USER': os.environ.get('PGUSER', ''),
        }},
        INSTALLED_APPS=['django_shop'],
        USE_TZ=True,
    )
    django.setup()
    from django.db import connection
    from django_shop.models import Order
    with connection.cursor() as cursor:
        cursor.execute('DROP TABLE IF EXISTS django_shop_order')
    with connection.schema_editor() as editor:
        editor.create_model(Order)
    return Order


def main():
    Order = setup_django()
    from django.db import connection
    from django.test import RequestFactory

    in_flight = 0
    most_in_flight = 0
    emails = []
    lock = threading.Lock()
    email_delay = [0.0]

    def call_payments_api():
        nonlocal in_flight, most_in_flight
        with lock:
            in_flight += 1
            most_in_flight = max(most_in_flight, in_flight)
        time.sleep(1.5)
        with lock:
            in_flight -= 1
        return 'paid'

    def send_email(order_id):
        time.sleep(email_delay[0])
        with lock:
            emails.append(order_id)

    recipe = {'Order': Order, 'call_payments_api': call_payments_api, 'send_email': send_email}
    exec(compile(readme_block('python', 'def send_shipped_email_once'), 'README.md', 'exec'),
         recipe)
    payments, send_once = recipe['payments'], recipe['send_shipped_email_once']

    # The throttled view: 12 concurrent requests of 1.5 s each, 4 slots, a 2 s wait. At most 4
    # run at once; the first 4 are served at once, the next 4 after waiting 1.5 s, and whoever
    # would have to wait 3 s gets a 503 after 2 s: more than 4 served (waiting worked), at most
    # 8, the rest refused.
    statuses = []

    def request():
        try:
            response = payments(RequestFactory().get('/payments'))
            with lock:
                statuses.append(response.status_code)
        finally:
            connection.close()  # each thread has its own Django connection

    threads = [threading.Thread(target=request) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    served, refused = statuses.count(200), statuses.count(503)
    check(len(statuses) == 12 and served + refused == 12,
          f'the throttled view answered all 12 requests ({served} served, {refused} refused)')
    check(most_in_flight <= 4 and most_in_flight == 4,
          f'never more than 4 calls in flight (saw {most_in_flight})')
    check(5 <= served <= 8 and refused >= 4,
          'requests that got a slot within 2 s (by waiting) were served, the others told 503')

    # Send the email once: 8 workers at once, one email.
    order = Order.objects.create()
    results = []

    def worker(order_id):
        try:
            result = send_once(order_id)
            with lock:
                results.append(result)
        finally:
            connection.close()

    email_delay[0] = 0.2
    threads = [threading.Thread(target=worker, args=(order.pk,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    order.refresh_from_db()
    check(emails == [order.pk] and results.count(True) == 1 and len(results) == 8,
          f'8 workers at once: one email, one True ({results})')
    check(order.shipped_email_sent, 'and the order is marked')
    check(send_once(order.pk) is False and emails == [order.pk],
          'a later run sends nothing: the order is marked')

    # A worker whose lease ran out before its fence: sem_fence raises, the mark is not written.
    late = Order.objects.create()
    emails.clear()
    email_delay[0] = 0.0
    recipe_lease = readme_block('python', 'def send_shipped_email_once').replace(
        "lease='2 minutes'", "lease='200 milliseconds'").replace(
        'send_email(order_id)', 'send_email(order_id); time.sleep(0.4)')
    short = dict(recipe, time=time)
    exec(compile(recipe_lease, 'README.md (lease of 200 ms)', 'exec'), short)
    try:
        short['send_shipped_email_once'](late.pk)
        check(False, 'a worker whose lease ran out cannot mark the order')
    except Exception as error:  # noqa: BLE001 -- the driver's error for SQLSTATE 55000
        code = getattr(getattr(error, '__cause__', None), 'pgcode', None) or \
            getattr(error, 'pgcode', None)
        check(code == '55000',
              f'a worker whose lease ran out gets an error from sem_fence (SQLSTATE {code})')
    late.refresh_from_db()
    check(not late.shipped_email_sent,
          'and its transaction wrote nothing: another worker may take the order over')
    connection.close()


if __name__ == '__main__':
    try:
        main()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        check(False, 'the cases ran to the end')
    sys.exit(tally.finish())
