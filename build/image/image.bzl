"""binary_image: a container image tarball holding one static Go binary."""

def binary_image(name, binary, image_name, **kwargs):
    """Writes <name>.tar, tagged <image_name>:v<VERSION>, with //build/image.

    Args:
      name: target name; the output is <name>.tar.
      binary: a static go_binary (pure = "on").
      image_name: the image's name, also the binary's path in the image.
      **kwargs: passed to the genrule.
    """
    native.genrule(
        name = name,
        srcs = [binary, "//:VERSION"],
        outs = [name + ".tar"],
        cmd = "$(execpath //build/image) --binary $(execpath %s) --name %s --version-file $(execpath //:VERSION) --output $@" % (binary, image_name),
        tools = ["//build/image"],
        **kwargs
    )
