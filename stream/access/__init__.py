"""Who may do what: the access model of a deployment, on Kafka and on Redis.

One table of roles (docs/operations.md "Access: who may do what"), written once here as data:
:mod:`stream.access.kafka` holds each role's Kafka ACLs, derived from the settings' topic
names, app id and groups; :mod:`stream.access.redis` each Redis user's ACL rules, derived from
the cache's key prefix. ``skillstream topics create --principal ROLE=PRINCIPAL`` prints and
applies the first (:mod:`stream.access.apply`), ``skillstream cache acl`` prints the second.
Nothing here but ``apply`` does I/O.
"""
