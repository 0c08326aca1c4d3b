"""What both the model adapters (:mod:`gavel.models`) and the runner (:mod:`gavel.runner`) need
to talk to a server: the rate gate and its limits, the retry policy, and what a failure is.

It sits below both, so an adapter never imports the runner: the runner drives adapters, and
both speak of requests refused, retried and paced in the same terms.
"""
