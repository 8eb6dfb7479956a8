from hypothesis import settings

# No example database in the source tree: every run starts fresh.
settings.register_profile("mintid", database=None, deadline=None)
settings.load_profile("mintid")
