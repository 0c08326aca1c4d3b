"""The defaults of the annotation server's limits, in one place: ``gavel annotate serve``
shows them as its settings' defaults without importing the server (docs/annotate.md,
"Limits"), and :mod:`~gavel.annotate.connections` and :mod:`~gavel.annotate.throttle` use
them."""

#: Seconds a client has to send a whole request (headers and body; bodies are small here).
REQUEST_SECONDS = 15.0
#: Seconds an idle keep-alive connection stays open (uvicorn's own default, named here).
KEEP_ALIVE_SECONDS = 5
#: Open connections (and running requests) beyond which a new request is answered 503.
MAX_CONNECTIONS = 200
#: Open connections one client address may hold; more are answered 503 and closed at once.
#: A browser opens about six: a NAT of a few people fits, one client cannot fill the server.
MAX_PER_ADDRESS = 50

#: Wrong tokens answered 401 before a wait begins: per address, per network, for everyone.
FREE_WRONG_TOKENS = 5
FREE_WRONG_TOKENS_NETWORK = 20
FREE_WRONG_TOKENS_ALL = 100
#: Seconds of the first wait (doubled by each further wrong token), the longest wait, and the
#: quiet time after which an address or network is forgotten.
FIRST_WAIT = 1.0
MAX_WAIT = 60.0
FORGET = 900.0
