"""The train loop a rendered RayJob's local working_dir ships."""


def train_func(config):
    return config
