2www.google.com2www.facebook.com2
google.orgBx