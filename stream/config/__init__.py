"""Configuration of a deployment: settings from the environment, server address checks, Kafka
security, the modes file. Imported by the services (pipeline, cache, cli, chaos, bench); imports
none of them."""
