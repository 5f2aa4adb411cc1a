"""What the tests share: the CLI runners, seeded data, glTF files written by hand, a real window under Xvfb."""
