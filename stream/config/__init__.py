"""Configuration of a deployment: settings from the environment, broker addresses, Kafka
security. Imported by every layer; imports none of them."""
