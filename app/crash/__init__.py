"""The crash view: a symbolized crash log you can click through to source."""
