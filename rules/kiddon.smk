# Stage rules: kiddon (see CONTRIBUTING.md).
