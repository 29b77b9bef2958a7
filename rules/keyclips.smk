# Stage rules: keyclips (see CONTRIBUTING.md).
